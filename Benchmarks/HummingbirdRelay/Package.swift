// swift-tools-version:6.0
// The Hummingbird room relay: the peer server Switchboard's benchmarks (M1/M2/M3) compare against.
// A separate package so the main build never resolves Hummingbird or SwiftNIO.

import PackageDescription

let package = Package(
    name: "HummingbirdRelay",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "HummingbirdRelay", targets: ["HummingbirdRelay"])
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.2"),
    ],
    targets: [
        .executableTarget(
            name: "HummingbirdRelay",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSCompression", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        )
    ]
)
