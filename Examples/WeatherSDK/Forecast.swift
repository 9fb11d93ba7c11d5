public struct Forecast: Sendable, Equatable, CustomStringConvertible {
    public var city: String
    public var celsius: Int
    public init(city: String, celsius: Int) { self.city = city; self.celsius = celsius }
    public var description: String { "\(city) \(celsius)°C" }
}

public enum WeatherError: Error, Equatable {
    /// The backend is overloaded: worth retrying after a pause.
    case temporarilyUnavailable
    case unknownCity(String)
}
