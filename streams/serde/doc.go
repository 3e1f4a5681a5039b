// Package serde holds the serializers of the streams library.
package serde
