package cli

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// clockTicksPerSecond is USER_HZ, the unit of utime and stime in
// /proc/PID/stat. Linux fixes it at 100 on every architecture it exports to
// user space, which is what lets this read work without cgo's sysconf.
const clockTicksPerSecond = 100

// procCPUSeconds reads the user plus system CPU time a process has used, from
// /proc/PID/stat. It measures any broker process, Samsa or a Java Kafka, from
// outside.
func procCPUSeconds(pid int) (float64, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("--broker-pid %d: %w", pid, err)
	}
	utime, stime, err := parseProcStat(data)
	if err != nil {
		return 0, fmt.Errorf("--broker-pid %d: %s: %w", pid, path, err)
	}
	return float64(utime+stime) / clockTicksPerSecond, nil
}

// parseProcStat extracts utime and stime (fields 14 and 15, in clock ticks).
// The command name (field 2) is in parentheses and may itself hold spaces and
// parentheses, so the fields are counted from the last ')'.
func parseProcStat(data []byte) (utime, stime uint64, err error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("no command name in %q", data)
	}
	fields := bytes.Fields(data[i+1:])
	// fields[0] is field 3 (state), so field n is fields[n-3].
	const utimeField, stimeField = 14 - 3, 15 - 3
	if len(fields) <= stimeField {
		return 0, 0, fmt.Errorf("only %d fields after the command name", len(fields))
	}
	if utime, err = strconv.ParseUint(string(fields[utimeField]), 10, 64); err != nil {
		return 0, 0, fmt.Errorf("utime: %w", err)
	}
	if stime, err = strconv.ParseUint(string(fields[stimeField]), 10, 64); err != nil {
		return 0, 0, fmt.Errorf("stime: %w", err)
	}
	return utime, stime, nil
}
