/// Placeholder until the JSON layer lands.
enum JSONModule {}
