#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif
import Bridges
