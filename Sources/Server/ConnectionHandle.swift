/// A connection as the chat loop knows it: which loop it lives on, and the connection itself,
/// touched only on that loop.
///
/// The chat service, the presence stream and the room directory run on one loop (the chat
/// loop, docs/architecture.md); their clients sit on every loop. The service keeps handles, and
/// whatever it sends to one goes through `Server.onHome(_:_:)`: at once when the connection is
/// on the chat loop, in the next hand-off to its loop otherwise.
///
/// @unchecked Sendable: the chat loop only stores the handle and reads `home` and `address`,
/// which never change; `connection` is used on the home loop alone.
final class ConnectionHandle: @unchecked Sendable {
    let connection: Connection
    /// The index of the loop the connection lives on.
    let home: Int
    /// The peer's address as the per-address limits count it (the chat's signup and login
    /// limits).
    let address: String

    init(_ connection: Connection, home: Int) {
        self.connection = connection
        self.home = home
        self.address = connection.address
    }
}
