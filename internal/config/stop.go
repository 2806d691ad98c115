package config

import (
	"fmt"
	"time"
)

// The parts of a stop besides sync.shutdown_timeout: after the deadline a
// run that did not stop is given ShutdownGrace to record what it did, and
// the alerts still queued are delivered for at most AlertFlushTimeout.
const (
	ShutdownGrace     = time.Second
	AlertFlushTimeout = 10 * time.Second
	// UnitStopTimeout is the shipped unit's TimeoutStopSec
	// (deploy/calsyncd.service; a test keeps the two equal).
	UnitStopTimeout = 45 * time.Second
)

// StopBudget is the longest a stop can take, from SIGTERM to exit: the
// drain, the grace and the alert flush. Under systemd the daemon asks for
// it (EXTEND_TIMEOUT_USEC), so a unit whose TimeoutStopSec is shorter does
// not kill it mid-write.
func (c *Config) StopBudget() time.Duration {
	return c.Sync.ShutdownTimeout.D() + ShutdownGrace + AlertFlushTimeout
}

// stopWarning notes a shutdown_timeout the shipped unit does not wait for.
func (c *Config) stopWarning(d *decoder) []Warning {
	if b := c.StopBudget(); b > UnitStopTimeout {
		return []Warning{{File: d.file, Line: d.line("sync.shutdown_timeout"), Key: "sync.shutdown_timeout",
			Msg: fmt.Sprintf("a stop can take up to %s (with the grace and the alert flush), longer than the shipped unit's TimeoutStopSec=%s: calsyncd asks systemd for the time (EXTEND_TIMEOUT_USEC, systemd 236 or newer); with an older systemd set TimeoutStopSec to at least %s",
				b, UnitStopTimeout, b+StopMargin)}}
	}
	return nil
}

// StopMargin is what the daemon asks of systemd beyond StopBudget: time
// to exit once done.
const StopMargin = 5 * time.Second
