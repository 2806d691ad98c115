package main

import (
	"net"
	"os"
	"strconv"
	"time"
)

// sdNotify sends a state to systemd when it started us with Type=notify
// (NOTIFY_SOCKET set); otherwise it does nothing.
func sdNotify(state string) error {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return nil
	}
	addr := &net.UnixAddr{Name: path, Net: "unixgram"}
	if path[0] == '@' {
		addr.Name = "\x00" + path[1:] // abstract socket
	}
	conn, err := net.DialUnix("unixgram", nil, addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.Write([]byte(state))
	return err
}

// watchdogInterval is how often to tell systemd we are alive: half of
// WatchdogSec, or 0 when no watchdog is configured for this process.
func watchdogInterval() time.Duration {
	usec, err := strconv.ParseInt(os.Getenv("WATCHDOG_USEC"), 10, 64)
	if err != nil || usec <= 0 {
		return 0
	}
	if pid := os.Getenv("WATCHDOG_PID"); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return 0
	}
	return time.Duration(usec) * time.Microsecond / 2
}
