// Package groupsref tests share groups (KIP-932) and streams groups
// (KIP-1071) with Apache Kafka's own Java clients, 4.4.0 from Maven
// Central: a KafkaShareConsumer in explicit acknowledgement mode and a
// Kafka Streams word count on group.protocol=streams under
// exactly_once_v2 (java/, built once into COMPAT_CACHE). Each scenario is
// one Go test run twice, against a real Apache Kafka 4.4 node
// (test/kafkaref), the reference it is proven on (with
// SAMSA_GROUPSREF_KAFKA=1: make groupsref), and against Samsa
// (internal/devcluster), always. README.md lists the scenarios and what
// each proves.
package groupsref
