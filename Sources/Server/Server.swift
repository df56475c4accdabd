/// Placeholder until the Server layer lands.
enum ServerModule {}
