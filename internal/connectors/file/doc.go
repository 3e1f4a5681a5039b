// Package file is Kafka's FileStream connectors: FileStreamSource reads a
// file (or standard input) line by line into a topic, remembering the byte
// position after each line as its source offset; FileStreamSink appends each
// record's value as a line to a file (or standard output). They carry Kafka's
// class names, aliases and configs (file, topic, batch.size), so a Kafka
// Connect config for them runs unchanged; docs/connect/connectors-basic.md
// says where they differ and why.
package file
