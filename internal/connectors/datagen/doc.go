// Package datagen is a data generator source with the class name, configs
// and offsets of Confluent's kafka-connect-datagen: each task makes records
// of a quickstart's schema (users, pageviews, orders), at random intervals
// up to max.interval, up to iterations records, from a seed that makes the
// data repeat exactly and that the source offset carries, so a restarted
// task goes on where it stopped. docs/connect/connectors-basic.md says what
// differs from Confluent's and why.
package datagen
