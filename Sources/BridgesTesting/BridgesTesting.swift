@_exported import Bridges
