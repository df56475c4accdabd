/// Placeholder until the TLS layer lands.
enum TLSModule {}
