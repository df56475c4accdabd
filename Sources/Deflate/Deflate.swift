/// Placeholder until the Deflate layer lands.
enum DeflateModule {}
