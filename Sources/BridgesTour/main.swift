// The tour. Run it with the README's first command, on Linux and on Apple platforms alike:
//
//     swift run --traits OpenCombine BridgesTour              every chapter
//     swift run --traits OpenCombine BridgesTour combine      some chapters
//     swift run --traits OpenCombine BridgesTour --list       the chapters
//
// The `OpenCombine` trait gives the Combine chapter OpenCombine on Linux; on Apple platforms the
// trait only fetches OpenCombine, which is not linked: the chapter uses Apple's Combine. Without the trait on Linux the
// Combine chapter is skipped, and the last line says so.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// (swift format would space the availability macro below as a platform name)

// swift-format-ignore
if #available(BridgesClock, *) {
    await runTour(Array(CommandLine.arguments.dropFirst()))
} else {
    Swift.print(
        "The tour measures with Clock and Duration: it needs macOS 13 / iOS 16 or later (the package itself runs back to macOS 10.15 / iOS 13)."
    )
    exit(1)
}

@available(BridgesClock, *)
func runTour(_ arguments: [String]) async -> Never {
    /// Every chapter, in reading order. Each lives in its own file under Chapters/.
    var chapters: [Chapter] = [
        singleShotChapter,
        delegatesChapter,
        combineChapter,
        lifetimesChapter,
        virtualTimeChapter,
    ]
    // debounce and mapLatest are typed by AsyncSequence.Failure: macOS 15 / iOS 18 and later.
    // (swift format would space the availability macro below as a platform name)
    // swift-format-ignore
    if #available(BridgesTypedSequence, *) {
        chapters.append(operatorsChapter)
    }

    if let demonstration = arguments.first, let crash = crashDemonstrations[demonstration] {
        await crash()  // a child process the single-shot chapter runs to show a legacy failure; does not return
    }
    if arguments == ["--list"] {
        for chapter in chapters { Swift.print("\(chapter.name)\t\(chapter.title)") }
        exit(0)
    }
    let unknown = arguments.filter { name in !chapters.contains { $0.name == name } }
    if !unknown.isEmpty {
        Swift.print(
            "Unknown chapter(s): \(unknown.joined(separator: ", ")). Chapters: \(chapters.map(\.name).joined(separator: ", "))"
        )
        exit(2)
    }
    let selected = arguments.isEmpty ? chapters : chapters.filter { arguments.contains($0.name) }

    Swift.print(
        """
        Bridges tour: each chapter shows the LEGACY code, then the BRIDGE over the same legacy API.
          │ lines are printed by the demonstrated code itself; • lines are what the tour measured.
        """)
    var failures: [String] = []
    var skipped: [String] = []
    for (index, chapter) in selected.enumerated() {
        Swift.print("\n\(index + 1). \(chapter.title)  [\(chapter.name)]")
        do {
            try await chapter.run()
        } catch let skip as ChapterSkipped {
            skipped.append("\(chapter.name): \(skip)")
            Swift.print("  SKIPPED  \(skip)")
        } catch {
            failures.append(chapter.name)
            Swift.print("  ✘ \(error)")
        }
        flushStandardOutput()
    }
    let figures = TourFigures.shared.all
    if !figures.isEmpty {
        Swift.print("\nMeasured in this run:")
        for figure in figures { Swift.print("  • " + figure) }
    }
    let ran = selected.count - skipped.count
    if !failures.isEmpty {
        Swift.print("\nTour: \(failures.count) chapter(s) failed: \(failures.joined(separator: ", ")).")
    } else if !skipped.isEmpty {
        Swift.print("\nTour finished: \(ran) chapter(s) held every promise; \(skipped.count) skipped:")
        for line in skipped { Swift.print("  \(line)") }
    } else {
        Swift.print("\nTour finished: \(ran) chapter(s), every promise held.")
    }
    exit(failures.isEmpty ? 0 : 1)
}
