//! Tests of [`super`].

use super::*;

#[test]
fn blocklist_catches_the_plainly_destructive_and_spares_the_rest() {
    for command in [
        "rm -rf /",
        "rm -rf / --no-preserve-root",
        "sudo rm -fr ~",
        "rm -rf $HOME",
        "mkfs.ext4 /dev/sda1",
        "dd if=/dev/zero of=/dev/sda bs=1M",
        "echo x > /dev/nvme0n1",
        "sudo shutdown -h now",
        "ls; reboot",
        ":(){ :|:& };:",
        "chmod -R 777 /",
        "rm -rf \"$HOME\"",
        "rm -rf '/'",
        // Arithmetic's `<<` is a shift, not a heredoc hiding the next line.
        "echo $((1<<EOF))\nmkfs -V\nEOF",
        "((mkfs -V); true)",
        "rm -fr ~/",
        "sudo -u root rm -rf /etc",
        "FOO=1 rm -rf /usr/",
        "ls && rm -rf /*",
        "echo $(rm -rf /)",
        "find . | xargs rm -rf /",
        "env X=1 rm -Rf /home",
        "systemctl reboot",
        "dd if=/dev/zero of=/dev/sda",
        "cat x > /dev/sda",
        // More of the same, through the splitter's other paths.
        "rm -rf \"${HOME}\"/*",
        "rm -r -- /var/",
        "rm /boot -rf",
        "/bin/rm --recursive /opt",
        "\\rm -rf /",
        "r'm' -rf /",
        "echo `rm -rf /`",
        "echo \"$(rm -rf ~)\"",
        "diff <(rm -rf /) x",
        "(cd /tmp && rm -rf /)",
        "{ rm -rf /; }",
        "if true; then rm -rf /; fi",
        "true &&\nrm -rf /",
        "sudo -E -- nice -n 5 nohup rm -rf /",
        "time -p doas -u root command rm -rf /",
        "exec rm -rf /root",
        "xargs -0 -I {} rm -rf / {}",
        "bash -c 'rm -rf /'",
        "sudo sh -ec \"rm -rf /\"",
        "cat <<EOF\nrm -rf /\nEOF\nrm -rf /",
        "echo x 2>/dev/null >>/dev/sdb",
        "cmd &> /dev/nvme0n1",
        "sudo systemctl --force poweroff",
        "mkfs -t ext4 /dev/sda1",
        "chown -R me:me /",
        "rm -rf / # bye",
    ] {
        assert!(blocked(command).is_some(), "{command}");
    }
    for command in [
        "rm -rf ./build",
        "rm -rf target/",
        "rm file.txt",
        "ls /",
        "echo reboot later",
        "dd if=a of=b",
        "grep -r shutdown src/",
        "chmod -R 755 ./dist",
        "git commit -m 'fix rm -rf / bug'",
        "echo \"rm -rf /\"",
        "grep -r 'reboot' .",
        "rm -rf ./home",
        "rm -rf build/ /tmp/x",
        "# rm -rf /",
        "cat <<EOF\nrm -rf /\nEOF",
        // More of the same.
        "cat <<-'END' > notes.md\n\trm -rf /\n\tEND\nls",
        "echo ok # rm -rf /",
        "rm -rf \"$HOME/.cache/x\"",
        "rm -rf ~/project/target",
        "rm /etc",
        "rm -i /",
        "rm -rf \"\"",
        "chmod -R 755 *",
        "chmod 755 /",
        "command -v reboot",
        "systemctl status reboot.target",
        "echo x > /dev/null 2>&1",
        "cat /dev/sda > disk.img",
        "printf '%s' 'dd of=/dev/sda'",
        "echo ${X:-rm -rf /}",
        "echo $'rm -rf /'",
    ] {
        assert!(blocked(command).is_none(), "{command}");
    }
}

#[test]
fn blocklist_keeps_its_reasons() {
    for (command, why) in [
        ("rm -rf /", "deletes the root, home or system folders"),
        ("mkfs.ext4 /dev/sda1", "formats a disk"),
        ("dd if=x of=/dev/sda", "overwrites a disk"),
        ("cat x > /dev/sda", "overwrites a disk"),
        ("reboot", "stops the machine"),
        (":(){ :|:& };:", "is a fork bomb"),
        ("chmod -R 777 /", "changes permissions of the whole system"),
        ("chown -R me /", "changes owners of the whole system"),
    ] {
        assert_eq!(blocked(command), Some(why), "{command}");
    }
}

#[test]
fn splits_commands_into_shell_words() {
    let argvs = |line: &str| -> Vec<Vec<String>> {
        simple_commands(line)
            .iter()
            .map(|command| command.argv().to_vec())
            .collect()
    };
    assert_eq!(
        argvs("FOO=1 sudo -u root env X='a b' nice -n 5 rm -rf \"$HOME\"/x 'it''s' a\\ b"),
        [["rm", "-rf", "$HOME/x", "its", "a b"]]
    );
    assert_eq!(
        argvs("a | b && c; (d) & e || { f; }\ng"),
        [["a"], ["b"], ["c"], ["d"], ["e"], ["f"], ["g"]]
    );
    assert_eq!(
        argvs("echo \"x $(ls -l) y\" 2>&1"),
        [vec!["ls", "-l"], vec!["echo", "x $(ls -l) y"]]
    );
    assert_eq!(
        argvs("cat <<'EOF' | wc -l\nrm -rf /\nEOF\ndone"),
        [vec!["cat"], vec!["wc", "-l"], vec!["done"]]
    );
}

#[test]
fn known_ways_around_the_blocklist() {
    // The blocklist reads the command's words, not what they become when the shell runs
    // them: text built at run time (printf, eval, variables, globs in another folder) or
    // destruction by another program goes through. The sandbox, not this list, is what
    // contains these. A case caught here one day is a change in behaviour worth a look.
    for command in [
        "bash -c \"$(printf 'rm -rf /')\"",
        "X=/; rm -rf $X",
        "find / -delete",
        "cd / && rm -rf *",
        "rm -rf /{usr,etc}",
    ] {
        assert_eq!(blocked(command), None, "{command}");
    }
    // What `eval` runs is read again as a command line (the shell's lexer does so for the
    // standing rules too).
    assert!(blocked("eval \"r\"\"m -rf /\"").is_some());
}

#[test]
fn blocklist_takes_any_text_without_panicking() {
    let tricky = [
        "echo \"unterminated $(rm -rf / 'x",
        "cat <<'EOF' >/dev/sda\nbody\nEO",
        "rm -rf \"${HOME}\"/* && echo `ls \\`pwd\\`` $'a\\'b' <(x) 2>&1 |& y",
        "sudo -u",
        "env -u",
        "xargs -I",
        "bash -c",
        "command -",
        ":(){ :|:& };:",
        "é$(ü'ß\"\\",
    ];
    for command in tricky {
        for (end, _) in command.char_indices() {
            let _ = blocked(&command[..end]);
        }
        let _ = blocked(command);
    }
    let alphabet: Vec<char> = "'\"\\$()|;&<> rm-f/~`{}#\n".chars().collect();
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut random = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        usize::try_from(state >> 33).unwrap_or_default()
    };
    for _ in 0..3_000 {
        let length = random() % 40;
        let command: String = (0..length)
            .map(|_| alphabet[random() % alphabet.len()])
            .collect();
        let _ = blocked(&command);
    }
    // Deep nesting is read only so deep.
    for nest in ["$(", "\"$(", "<(", "`\\", "${", "bash -c '"] {
        let _ = blocked(&nest.repeat(5_000));
    }
}
