/// Placeholder until the HTTP layer lands.
enum HTTPModule {}
