/// Placeholder until the Relay layer lands.
enum RelayModule {}
