// Package vfs is the filesystem seam. Storage code opens, writes, syncs and
// renames files only through an FS, so tests can run it over an in-memory
// filesystem that models what survives a crash (Mem) and over a wrapper that
// injects errors at any operation (Faulty).
//
// The interface is deliberately small: positional reads and writes, sync,
// truncate, and the directory operations a log needs (create, rename,
// remove, list, sync a directory). Anything more belongs in the caller.
package vfs
