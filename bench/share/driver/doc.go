// Command driver is the share-group benchmark of issue 21 (bench/share/run.sh,
// docs/PERFORMANCE.md#share-groups): delivery throughput of a share group
// (KIP-932) with 1, 4 and 16 consumers on one partition, Samsa against
// Apache Kafka 4.4 on this machine. Each run starts a fresh broker of each
// kind (Samsa through bench/internal/procstat, Kafka through
// bench/internal/kafkanode), and for each consumer count C makes a topic of
// one partition, produces a backlog of N records, sets the share group's
// share.auto.offset.reset to earliest (IncrementalAlterConfigs on the
// GROUP resource) and starts C franz-go share consumers, each its own
// client in this process, which accept every record explicitly
// (MarkAcks(AckAccept) after each poll) until every offset of the backlog
// has been delivered. It reports records/s, duplicates (an offset
// delivered more than once), redeliveries, the broker's CPU seconds per
// million records and its RSS during the consumption, medians over the
// runs and the Samsa/Kafka ratios, in results.json and results.md.
//
// -start prime gets the same backlog without the group config: one
// consumer joins the empty topic (the group's share-partition starts at its
// high watermark, 0) and leaves before the produce (Samsa only: Kafka 4.4
// starts the group again at the high watermark). -start live measures
// the consumers joined first and the backlog produced while they consume.
// A broker that refuses the group config is measured as -fallback says
// (live by default); the report marks such rows.
package main
