//go:build !unix

package linesink

import "errors"

var errNoSpace = errors.New("no space left on device")
