// Command driver is the web console's large-data benchmark of issue 22
// (make bench-console, bench/console/run.sh, docs/PERFORMANCE.md#console):
// "a topic of 10 million records and 1,000 partitions, a cluster with
// 10,000 partitions: each page answers in under 300 ms on this machine,
// the message browser never loads more than a page of records".
//
// It starts one `samsa serve` (its console on samsa.console.listener,
// its /metrics on samsa.http.listener; -console inproc runs
// internal/console in this process against the broker instead, for a
// binary without the console listener), loads the data set (a big topic
// of -records records in -partitions partitions, produced by -producers
// franz-go clients; small topics of -topic-partitions partitions each up
// to -cluster-partitions in the cluster; consumer groups with committed
// offsets on the big topic, one with a live member, and more groups on
// the small topics), then requests every console page over HTTP,
// sequentially as one browser: -warmup requests, then -n timed ones
// (the time to the last byte of the answer), reporting the median and p90
// against -target, the answer's bytes, and, from one more request
// bracketed by two scrapes of the broker's /metrics, the Kafka requests
// the page made (per API, with the broker's time in them) and the bytes
// of the big topic the broker sent (the records a message-browser page
// read). A page the console does not have (404) is reported as absent.
//
// A data directory that already holds the data set (-data, kept between
// runs) is measured again without loading it.
package main
