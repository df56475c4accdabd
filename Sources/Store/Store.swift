/// Placeholder until the Store layer lands.
enum StoreModule {}
