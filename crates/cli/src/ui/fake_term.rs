//! A terminal for tests: a grid of cells and a cursor, fed by the spinner (as indicatif's
//! `TermLike`) and by the screen's writers (as `io::Write`), so what a user would see can be
//! read back line by line. It understands what the output uses: `\r`, `\n`, erase line
//! (`ESC[2K`, `ESC[K`), erase below (`ESC[J`), cursor moves (`ESC[nA`/`B`/`C`/`D`) and SGR (ignored); anything else
//! after an escape is drawn as is, which makes it visible in the test's assertion.

use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use indicatif::TermLike;

#[derive(Debug, Clone)]
pub struct FakeTerm(Arc<Mutex<Grid>>);

#[derive(Debug)]
struct Grid {
    width: usize,
    rows: Vec<Vec<char>>,
    row: usize,
    col: usize,
    /// An escape sequence being read.
    escape: Option<String>,
}

impl FakeTerm {
    pub fn new(width: usize) -> Self {
        Self(Arc::new(Mutex::new(Grid {
            width,
            rows: vec![Vec::new()],
            row: 0,
            col: 0,
            escape: None,
        })))
    }

    fn grid(&self) -> std::sync::MutexGuard<'_, Grid> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The screen's lines, trailing spaces and empty trailing lines dropped.
    pub fn lines(&self) -> Vec<String> {
        let grid = self.grid();
        let mut lines: Vec<String> = grid
            .rows
            .iter()
            .map(|row| row.iter().collect::<String>().trim_end().to_string())
            .collect();
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        lines
    }

    /// (row, column) of the cursor.
    pub fn cursor(&self) -> (usize, usize) {
        let grid = self.grid();
        (grid.row, grid.col)
    }

    pub fn feed(&self, text: &str) {
        let mut grid = self.grid();
        for c in text.chars() {
            grid.put(c);
        }
    }
}

impl Grid {
    fn put(&mut self, c: char) {
        if let Some(escape) = &mut self.escape {
            escape.push(c);
            if escape == "[" || (escape.starts_with('[') && !c.is_ascii_alphabetic()) {
                return;
            }
            let sequence = std::mem::take(escape);
            self.escape = None;
            self.sequence(&sequence);
            return;
        }
        match c {
            '\u{1b}' => self.escape = Some(String::new()),
            '\r' => self.col = 0,
            '\n' => {
                self.row += 1;
                self.col = 0;
            }
            c => {
                if self.col >= self.width {
                    self.row += 1;
                    self.col = 0;
                }
                let (row, col) = (self.row, self.col);
                let line = self.line(row);
                if line.len() <= col {
                    line.resize(col + 1, ' ');
                }
                line[col] = c;
                self.col += 1;
            }
        }
    }

    fn line(&mut self, row: usize) -> &mut Vec<char> {
        if self.rows.len() <= row {
            self.rows.resize(row + 1, Vec::new());
        }
        &mut self.rows[row]
    }

    fn sequence(&mut self, sequence: &str) {
        let Some(body) = sequence.strip_prefix('[') else {
            // Not a CSI sequence: shown, so a test sees it.
            self.put('^');
            for c in sequence.chars() {
                self.put(c);
            }
            return;
        };
        let (arguments, command) = body.split_at(body.len() - 1);
        let n: usize = arguments.parse().unwrap_or(1);
        match command {
            "m" => {}
            "K" => {
                let (row, col) = (self.row, self.col);
                let line = self.line(row);
                if arguments == "2" {
                    line.clear();
                } else {
                    line.truncate(col);
                }
            }
            "J" => {
                // From the cursor to the end of the screen.
                let (row, col) = (self.row, self.col);
                self.line(row).truncate(col);
                self.rows.truncate(row + 1);
            }
            "A" => self.row = self.row.saturating_sub(n),
            "B" => self.row += n,
            "C" => self.col += n,
            "D" => self.col = self.col.saturating_sub(n),
            _ => {
                self.put('^');
                for c in sequence.chars() {
                    self.put(c);
                }
            }
        }
    }
}

impl io::Write for FakeTerm {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.feed(&String::from_utf8_lossy(buf));
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl TermLike for FakeTerm {
    fn width(&self) -> u16 {
        u16::try_from(self.grid().width).unwrap_or(u16::MAX)
    }

    fn move_cursor_up(&self, n: usize) -> io::Result<()> {
        if n > 0 {
            self.feed(&format!("\u{1b}[{n}A"));
        }
        Ok(())
    }

    fn move_cursor_down(&self, n: usize) -> io::Result<()> {
        if n > 0 {
            self.feed(&format!("\u{1b}[{n}B"));
        }
        Ok(())
    }

    fn move_cursor_right(&self, n: usize) -> io::Result<()> {
        if n > 0 {
            self.feed(&format!("\u{1b}[{n}C"));
        }
        Ok(())
    }

    fn move_cursor_left(&self, n: usize) -> io::Result<()> {
        if n > 0 {
            self.feed(&format!("\u{1b}[{n}D"));
        }
        Ok(())
    }

    fn write_line(&self, s: &str) -> io::Result<()> {
        self.feed(s);
        self.feed("\n");
        Ok(())
    }

    fn write_str(&self, s: &str) -> io::Result<()> {
        self.feed(s);
        Ok(())
    }

    fn clear_line(&self) -> io::Result<()> {
        self.feed("\r\u{1b}[2K");
        Ok(())
    }

    fn flush(&self) -> io::Result<()> {
        Ok(())
    }
}
