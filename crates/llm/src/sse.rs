//! Server-sent events framing (the WHATWG `text/event-stream` rules), in time linear in the
//! bytes received however they are split: a byte is looked at once when its line is found and
//! once when the line is handled. A ready-made parser that searched its whole buffer again on
//! every chunk took minutes over one 10 MB event.

/// One event: its type (`message` when the stream gave none) and its data lines joined by `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The `event:` field.
    pub event: String,
    /// The `data:` fields, joined.
    pub data: String,
}

/// Turns chunks of bytes into events.
#[derive(Debug, Default)]
pub struct Parser {
    /// Bytes of the line being received.
    buffer: Vec<u8>,
    /// How far `buffer` was searched for a line end already.
    searched: usize,
    /// A `\r` ended the last line: a `\n` right after it belongs to it.
    after_cr: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl Parser {
    /// Feeds a chunk; the events it completes.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Event> {
        let mut events = Vec::new();
        let mut chunk = chunk;
        // An empty chunk between a CR and its LF changes nothing.
        if self.after_cr && !chunk.is_empty() {
            self.after_cr = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        self.buffer.extend_from_slice(chunk);
        let mut start = 0;
        let mut index = self.searched;
        while index < self.buffer.len() {
            match self.buffer[index] {
                b'\n' => {
                    self.line(start, index, &mut events);
                    start = index + 1;
                }
                b'\r' => {
                    self.line(start, index, &mut events);
                    if index + 1 == self.buffer.len() {
                        self.after_cr = true;
                    } else if self.buffer[index + 1] == b'\n' {
                        index += 1;
                    }
                    start = index + 1;
                }
                _ => {}
            }
            index += 1;
        }
        self.buffer.drain(..start);
        self.searched = self.buffer.len();
        events
    }

    /// Handles the line `buffer[start..end]`.
    fn line(&mut self, start: usize, end: usize, events: &mut Vec<Event>) {
        let line = String::from_utf8_lossy(&self.buffer[start..end]);
        if line.is_empty() {
            if self.has_data {
                events.push(Event {
                    event: if self.event.is_empty() {
                        "message".to_string()
                    } else {
                        std::mem::take(&mut self.event)
                    },
                    data: std::mem::take(&mut self.data),
                });
            }
            self.event.clear();
            self.data.clear();
            self.has_data = false;
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "event" => value.clone_into(&mut self.event),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str = "event: message_start\ndata: {\"a\":1}\n\n: comment\r\nevent: ping\r\ndata: {}\r\n\r\ndata: line one\ndata: line two\n\nevent:no-space\ndata:x\r\rdata: é ü\n\nevent: empty\n\n";

    fn expected() -> Vec<Event> {
        let event = |event: &str, data: &str| Event {
            event: event.into(),
            data: data.into(),
        };
        vec![
            event("message_start", "{\"a\":1}"),
            event("ping", "{}"),
            event("message", "line one\nline two"),
            event("no-space", "x"),
            event("message", "é ü"),
        ]
    }

    #[test]
    fn any_split_of_the_bytes_gives_the_same_events() {
        let bytes = STREAM.as_bytes();
        let whole = Parser::default().feed(bytes);
        assert_eq!(whole, expected());
        // Every split in two, and byte by byte.
        for cut in 0..=bytes.len() {
            let mut parser = Parser::default();
            let mut events = parser.feed(&bytes[..cut]);
            events.extend(parser.feed(&bytes[cut..]));
            assert_eq!(events, expected(), "cut at {cut}");
        }
        let mut parser = Parser::default();
        let events: Vec<Event> = bytes
            .iter()
            .flat_map(|byte| parser.feed(std::slice::from_ref(byte)))
            .collect();
        assert_eq!(events, expected());
        // Deterministic pseudo-random splits.
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..200 {
            let mut parser = Parser::default();
            let mut events = Vec::new();
            let mut at = 0;
            while at < bytes.len() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let step = 1 + usize::try_from(state % 9).unwrap();
                let end = (at + step).min(bytes.len());
                events.extend(parser.feed(&bytes[at..end]));
                at = end;
            }
            assert_eq!(events, expected());
        }
    }

    #[test]
    fn one_huge_event_in_small_chunks_is_read_once() {
        let data = "x".repeat(4 * 1024 * 1024);
        let stream = format!("data: {data}\n\n");
        let mut parser = Parser::default();
        let mut events = Vec::new();
        for chunk in stream.as_bytes().chunks(1024) {
            events.extend(parser.feed(chunk));
        }
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data.len(), data.len());
    }
}
