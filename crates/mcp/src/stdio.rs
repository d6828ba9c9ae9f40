//! stdio with every line checked before the SDK sees it: a line that is not JSON gets a
//! JSON-RPC parse error (-32700) and a line over [`MAX_MESSAGE_BYTES`] an invalid-request error
//! (-32600), both with a null id as JSON-RPC says, where the SDK alone would drop them without
//! a word. Everything else passes through unchanged, and the SDK's answers and the errors reach
//! stdout a whole line at a time.

use futures_util::StreamExt as _;
use tokio::io::{AsyncWriteExt as _, DuplexStream};
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};

/// The longest message taken from stdin.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
/// The buffer between this layer and the SDK, each way.
const PIPE_BYTES: usize = 64 * 1024;

fn error_line(code: i64, message: &str) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}})
        .to_string()
}

/// The SDK's end of a checked stdio: what it reads and where it writes.
pub fn checked() -> (DuplexStream, DuplexStream) {
    let (sdk_in, mut to_sdk) = tokio::io::duplex(PIPE_BYTES);
    let (sdk_out, from_sdk) = tokio::io::duplex(PIPE_BYTES);
    let (errors, mut error_lines) = tokio::sync::mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        let mut lines = FramedRead::new(
            tokio::io::stdin(),
            LinesCodec::new_with_max_length(MAX_MESSAGE_BYTES),
        );
        while let Some(line) = lines.next().await {
            match line {
                Ok(line) if line.trim().is_empty() => {}
                Ok(line) => {
                    if serde_json::from_str::<serde_json::Value>(&line).is_err() {
                        let _ =
                            errors.send(error_line(-32700, "Parse error: the line is not JSON"));
                        continue;
                    }
                    let written = async {
                        to_sdk.write_all(line.as_bytes()).await?;
                        to_sdk.write_all(b"\n").await
                    };
                    if written.await.is_err() {
                        break;
                    }
                }
                Err(LinesCodecError::MaxLineLengthExceeded) => {
                    let _ = errors.send(error_line(
                        -32600,
                        &format!("Invalid request: a message over {MAX_MESSAGE_BYTES} bytes"),
                    ));
                }
                Err(LinesCodecError::Io(_)) => break,
            }
        }
        // stdin ended: the SDK sees its input end too, and ends the session.
        let _ = to_sdk.shutdown().await;
    });
    tokio::spawn(async move {
        let mut answers = FramedRead::new(from_sdk, LinesCodec::new());
        let mut stdout = tokio::io::stdout();
        loop {
            let line = tokio::select! {
                answer = answers.next() => match answer {
                    Some(Ok(line)) => line,
                    _ => break,
                },
                Some(error) = error_lines.recv() => error,
            };
            let written = async {
                stdout.write_all(line.as_bytes()).await?;
                stdout.write_all(b"\n").await?;
                stdout.flush().await
            };
            if written.await.is_err() {
                break;
            }
        }
    });
    (sdk_in, sdk_out)
}
