// `swift run BridgesTour` runs every chapter; `swift run BridgesTour <chapter>…` runs some.
// `swift run BridgesTour --list` lists them.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every chapter, in reading order. Each lives in its own file under Chapters/.
let chapters: [Chapter] = [
    singleShotChapter,
    combineChapter,
    delegatesChapter,
    lifetimesChapter,
]

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments == ["--list"] {
    for chapter in chapters { print("\(chapter.name)\t\(chapter.title)") }
    exit(0)
}
let unknown = arguments.filter { name in !chapters.contains { $0.name == name } }
if !unknown.isEmpty {
    print("Unknown chapter(s): \(unknown.joined(separator: ", ")). Chapters: \(chapters.map(\.name).joined(separator: ", "))")
    exit(2)
}
let selected = arguments.isEmpty ? chapters : chapters.filter { arguments.contains($0.name) }

var failures = 0
for (index, chapter) in selected.enumerated() {
    print("\n\(index + 1). \(chapter.title)  [\(chapter.name)]")
    do {
        try await chapter.run()
    } catch {
        failures += 1
        print("  ✘ \(error)")
    }
}
print(failures == 0 ? "\nTour finished: \(selected.count) chapter(s), every promise held." : "\nTour: \(failures) chapter(s) failed.")
exit(failures == 0 ? 0 : 1)
