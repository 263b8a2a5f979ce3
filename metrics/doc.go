// Package metrics keeps counters, gauges and histograms in memory and
// writes them in the Prometheus text exposition format (version 0.0.4),
// which every Prometheus-compatible scraper reads.
//
// It is small on purpose. Every family has a fixed set of label values,
// chosen when it is made, so recording is one or two atomic operations with
// no lock, no map look-up and no allocation, and a family's series exist
// (at zero) from the start. Values that are cheaper to read than to keep up
// to date (a map's length, a row count) are read at scrape time through
// GaugeFunc, CounterFunc and GaugeVecFunc. The one exception to fixed
// label values is GaugeSetFunc, whose series (one label) are read at
// scrape time: for sets the server learns as it runs, such as the names it
// holds certificates for.
//
// A Registry collects the metrics of every package and serves them over
// HTTP. Packages make their own metrics and hand them to the registry that
// cmd builds; they never reach a global registry.
package metrics
