/// Placeholder until the Chat layer lands.
enum ChatModule {}
