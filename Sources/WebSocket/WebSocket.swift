/// Placeholder until the WebSocket layer lands.
enum WebSocketModule {}
