import Store
import Testing
@testable import Server

@Test func familiesHaveHelpAndTypeBeforeTheirSamples() {
    var exposition = PrometheusText()
    exposition.add(.counter, "a_total", "As.", 3)
    exposition.add(.gauge, "b", "Bs by kind.", labelled: [(labels: "{kind=\"x\"}", value: 1), (labels: "{kind=\"y\"}", value: 2)])
    #expect(exposition.text == """
        # HELP a_total As.
        # TYPE a_total counter
        a_total 3
        # HELP b Bs by kind.
        # TYPE b gauge
        b{kind="x"} 1
        b{kind="y"} 2

        """)
}

@Test func histogramBucketsAreCumulativeAndEndWithInfinity() {
    var histogram = StoreStatistics.Histogram(upperBounds: [0.001, 0.01])
    histogram.record(0.0005)
    histogram.record(0.005)
    histogram.record(0.5)
    var exposition = PrometheusText()
    exposition.histogram("f_seconds", "Fs.", histogram)
    let lines = exposition.text.split(separator: "\n")
    #expect(lines[2] == "f_seconds_bucket{le=\"0.001\"} 1")
    #expect(lines[3] == "f_seconds_bucket{le=\"0.01\"} 2")
    #expect(lines[4] == "f_seconds_bucket{le=\"+Inf\"} 3")
    #expect(lines[6] == "f_seconds_count 3")
}
