@main
struct Switchboard {
    static func main() {}
}
