/// Placeholder until the Posix layer lands.
enum PosixModule {}
