// Package model holds the small typed identifiers every layer shares, named
// as Kafka names them.
package model
