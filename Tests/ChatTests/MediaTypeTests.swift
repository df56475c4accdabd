import Testing
@testable import Chat

@Test func contentTypesNameTheFourImageFormatsWhateverTheirCaseAndParameters() {
    #expect(MediaType(contentType: "image/png") == .png)
    #expect(MediaType(contentType: "IMAGE/JPEG; charset=binary") == .jpeg)
    #expect(MediaType(contentType: " image/gif ") == .gif)
    #expect(MediaType(contentType: "image/webp") == .webp)
    #expect(MediaType(contentType: "image/svg+xml") == nil)
    #expect(MediaType(contentType: "text/html") == nil)
    #expect(MediaType(contentType: "") == nil)
}

@Test func eachFormatIsRecognisedByItsSignatureAlone() {
    let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0]
    let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0]
    let gif = Array("GIF89a".utf8) + [1, 0]
    let webp = Array("RIFF".utf8) + [4, 0, 0, 0] + Array("WEBPVP8L".utf8)
    #expect(MediaType.png.matches(png) && MediaType.jpeg.matches(jpeg))
    #expect(MediaType.gif.matches(gif) && MediaType.gif.matches(Array("GIF87a".utf8)))
    #expect(MediaType.webp.matches(webp))
    #expect(!MediaType.png.matches(jpeg) && !MediaType.jpeg.matches(png) && !MediaType.gif.matches(webp))
    #expect(!MediaType.webp.matches(Array("RIFF\u{4}\0\0\0WAVE".utf8)), "a RIFF that is not WebP")
    #expect(!MediaType.png.matches(Array(png.prefix(7))) && !MediaType.webp.matches(Array(webp.prefix(11))))
    #expect(!MediaType.png.matches(Array("<html><script>".utf8)))
}
