// swift-tools-version: 6.0
import PackageDescription

// The chat service and the room registry are generic over the connection type, and the Server
// module instantiates them with its one. Across modules the optimizer cannot specialize them
// for it, so their code ran generically: type metadata looked up at run time, values copied
// and destroyed through witness tables. In release builds, cross-module optimization lets the
// Server module specialize them (BENCHMARKS.md, "One escaping per send": 3% fewer
// instructions per acknowledged send). An unsafe flag only forbids using this package as a
// dependency of another, which a server is not.
let specializedByTheServer: [SwiftSetting] = [
    .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))
]

// Linux only: the server is built on epoll, eventfd, signalfd and accept4, so no Apple
// platform is declared.
let package = Package(
    name: "Switchboard",
    products: [
        .executable(name: "switchboard", targets: ["switchboard"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // C shims: headers and static inline wrappers only.
        .target(name: "CLinux"),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),

        // Vocabulary: no I/O.
        .target(name: "Bytes"),
        .target(name: "JSON", dependencies: ["Bytes"]),
        // Hashing, HMAC and randomness from OpenSSL, for passwords, tokens and certificates.
        .target(name: "Crypto", dependencies: ["COpenSSL"]),

        // The one funnel for system calls: epoll, sockets, files, clocks.
        .target(name: "Posix", dependencies: ["Bytes", "CLinux"]),

        // One level above; these do not import each other.
        .target(name: "TLS", dependencies: ["Bytes", "COpenSSL", "Crypto"]),
        .target(name: "HTTP", dependencies: ["Bytes"]),
        .target(name: "Relay", swiftSettings: specializedByTheServer),
        .target(name: "Store", dependencies: ["Crypto", "JSON", "Posix", .product(name: "Logging", package: "swift-log")]),
        // RESP2 client of a cluster's Redis, driven by the node's own event loop (docs/cluster.md).
        .target(name: "Redis", dependencies: ["Bytes", "Posix", .product(name: "Logging", package: "swift-log")]),

        // Protocol layers.
        .target(name: "WebSocket", dependencies: ["Bytes"]),
        .target(name: "Deflate", dependencies: ["Bytes", "CZlib", "WebSocket"]),

        // The chat service: accounts, groups, history over the store and the rooms.
        .target(
            name: "Chat",
            dependencies: [
                "Bytes", "Crypto", "JSON", "Posix", "Relay", "Store", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: specializedByTheServer
        ),

        // Wiring and the executable.
        .target(
            name: "Server",
            dependencies: [
                "Bytes", "Chat", "Crypto", "Deflate", "HTTP", "JSON", "Posix", "Redis", "Relay", "Store", "TLS",
                "WebSocket", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "switchboard",
            dependencies: [
                "Posix", "Redis", "Server", "TLS",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        .testTarget(name: "BytesTests", dependencies: ["Bytes"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto"]),
        .testTarget(name: "PosixTests", dependencies: ["Bytes", "Posix"]),
        .testTarget(name: "TLSTests", dependencies: ["Bytes", "COpenSSL", "Posix", "TLS"]),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP"]),
        .testTarget(name: "RelayTests", dependencies: ["Relay"]),
        .testTarget(
            name: "RedisTests", dependencies: ["Bytes", "Posix", "Redis", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(name: "StoreTests", dependencies: ["JSON", "Store", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "WebSocketTests", dependencies: ["Bytes", "WebSocket"]),
        .testTarget(name: "DeflateTests", dependencies: ["CZlib", "Deflate", "WebSocket"]),
        .testTarget(
            name: "ChatTests",
            dependencies: ["Chat", "JSON", "Store", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "ServerTests",
            dependencies: [
                "Bytes", "Deflate", "HTTP", "Posix", "Redis", "Server", "Store", "WebSocket",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)

// libFuzzer targets (Fuzz/, docs/fuzzing.md). Declared only when scripts/fuzz builds them, into
// its own scratch folder with -sanitize=fuzzer,address, so `swift build` and `swift test` never
// compile them. Being targets of this package, they reach internal API through @testable import
// (debug builds enable testing), which a separate package depending on this one could not.
if Context.environment["SWITCHBOARD_FUZZ"] == "1" {
    func fuzzTarget(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
        .executableTarget(
            name: "fuzz-\(name)", dependencies: dependencies + ["FuzzSupport"], path: "Fuzz/\(name)",
            exclude: ["corpus"])
    }
    package.targets += [
        .target(name: "CFuzzer", path: "Fuzz/CFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzer"], path: "Fuzz/Support"),
        fuzzTarget("http", ["HTTP"]),
        fuzzTarget("frames", ["WebSocket", "Deflate", "Bytes"]),
        fuzzTarget("inflater", ["Deflate", "WebSocket"]),
        fuzzTarget("json", ["JSON"]),
        fuzzTarget("chat-request", ["Chat", "JSON"]),
        fuzzTarget("store", ["Store", "JSON", "Posix", .product(name: "Logging", package: "swift-log")]),
        fuzzTarget("resp", ["Redis"]),
    ]
}
