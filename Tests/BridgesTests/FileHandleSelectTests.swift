import Testing

@testable import Bridges

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `select` fallback the file-handle reader uses for a descriptor `poll` cannot watch (macOS
/// `poll` answers `POLLNVAL` for a terminal): it must answer as `poll` does for the same
/// descriptors. Checked here on pipes, which both can watch.
@Suite("FileHandle reader: select in place of poll", .timeLimit(.minutes(3)))
struct FileHandleSelectTests {
    @Test func answersLikePoll_forReadableAndIdleDescriptors() throws {
        var wake: [Int32] = [0, 0]
        var data: [Int32] = [0, 0]
        try #require(pipe(&wake) == 0 && pipe(&data) == 0)
        defer { for fd in wake + data { close(fd) } }
        #expect(write(data[1], "x", 1) == 1)

        var viaSelect = [
            pollfd(fd: wake[0], events: Int16(POLLIN), revents: 0),
            pollfd(fd: data[0], events: Int16(POLLIN), revents: 0),
        ]
        var viaPoll = viaSelect
        #expect(_selectReadable(&viaSelect, 2) == 1)
        #expect(poll(&viaPoll, 2, 0) == 1)
        #expect(viaSelect.map(\.revents) == [0, Int16(POLLIN)])
        #expect(viaPoll.map(\.revents) == [0, Int16(POLLIN)])

        // Only the first `count` descriptors are watched.
        #expect(write(wake[1], "w", 1) == 1)
        var first = viaSelect
        #expect(_selectReadable(&first, 1) == 1)
        #expect(first[0].revents == Int16(POLLIN))
    }

    @Test func refusesDescriptorsSelectCannotHold() {
        var fds = [pollfd(fd: Int32(FD_SETSIZE), events: Int16(POLLIN), revents: 0)]
        #expect(_selectReadable(&fds, 1) == -1)
        #expect(errno == EINVAL)
    }
}
