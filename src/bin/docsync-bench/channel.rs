//! The wake-up channels a subscriber can use.

use clap::ValueEnum;

/// A wake-up channel (PROTOCOL §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Channel {
    #[value(name = "websocket")]
    WebSocket,
    Sse,
    #[value(name = "longpoll")]
    LongPoll,
}

impl Channel {
    pub const ALL: [Channel; 3] = [Channel::WebSocket, Channel::Sse, Channel::LongPoll];

    pub fn name(self) -> &'static str {
        match self {
            Channel::WebSocket => "websocket",
            Channel::Sse => "sse",
            Channel::LongPoll => "longpoll",
        }
    }

    /// The `channel` label of the server's `docsync_subscribers` gauge.
    pub fn metric_label(self) -> &'static str {
        match self {
            Channel::WebSocket => "websocket",
            Channel::Sse => "sse",
            Channel::LongPoll => "long_poll",
        }
    }
}
