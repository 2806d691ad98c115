package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"strings"
)

// release is this source tree's version; a build may stamp another with
// -ldflags "-X main.version=…".
const release = "0.9.0"

// version is the version a build stamped ("" for none: release).
var version = ""

// DefaultConfigPath is where the README installs the configuration; the
// CALSYNCD_CONFIG environment variable names another.
const DefaultConfigPath = "/etc/calsyncd/config.yaml"

// installedConfig is DefaultConfigPath (tests point it elsewhere).
var installedConfig = DefaultConfigPath

// configEnv names the configuration file when --config is not given.
const configEnv = "CALSYNCD_CONFIG"

// defaultConfig is --config's default: $CALSYNCD_CONFIG, else
// DefaultConfigPath.
func defaultConfig() string {
	if p := os.Getenv(configEnv); p != "" {
		return p
	}
	return installedConfig
}

// configFlag registers --config with its default.
func configFlag(set *flag.FlagSet) *string {
	return set.String("config", defaultConfig(), "configuration file (when not given: $"+configEnv+" if set, else the default)")
}

// buildInfo is what the binary knows of its own build: the version, the
// VCS revision and whether the tree had changes (when the build recorded
// them), and the Go release.
type buildInfo struct {
	Version, Revision, GoVersion string
	Modified                     bool
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: version}
	if b.Version == "" {
		b.Version = release
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.GoVersion = info.GoVersion
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the version line: "0.9.0 (3f0542a1b2c3, modified, go1.26.8)".
func (b buildInfo) String() string {
	var extra []string
	if b.Revision != "" {
		rev := b.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		extra = append(extra, rev)
		if b.Modified {
			extra = append(extra, "modified")
		}
	}
	if b.GoVersion != "" {
		extra = append(extra, b.GoVersion)
	}
	if len(extra) == 0 {
		return b.Version
	}
	return b.Version + " (" + strings.Join(extra, ", ") + ")"
}

// parseArgs parses flags wherever they stand among the arguments, as
// people type them (`sync family --json`); "--" ends the flags. It
// returns the positional arguments.
func parseArgs(set *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := set.Parse(args); err != nil {
			return nil, err
		}
		rest := set.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// helpText is what `calsyncd CMD -h` shows beside the flags.
type helpText struct {
	description string
	examples    []string
}

// exitCodes is the same for every command.
const exitCodes = `Exit status:
  0  done (for sync and check: every subscription did)
  1  a subscription, a feed, Google or the configuration failed; the message says which and what to do
  2  a usage mistake: an unknown command, flag or subscription id, or no configuration file`

var helps = map[string]helpText{
	"run": {"Runs the daemon: every subscription on its schedule, the status endpoint on `listen`, reload on SIGHUP,\na drain on SIGTERM. It is what the systemd unit starts.",
		[]string{"calsyncd run --config /etc/calsyncd/config.yaml", "calsyncd run --strict-perms"}},
	"sync": {"Syncs the subscriptions (all, or the IDs given) once and exits; hands them to a running daemon when\none holds the account. --dry-run prints the plan and writes nothing.",
		[]string{"calsyncd sync", "calsyncd sync family --dry-run", "calsyncd sync family --allow-deletes", "calsyncd sync --json"}},
	"status": {"Shows each subscription's state, last run and notes from the database, whether the daemon runs or not.\nIt reads a private copy of the database and needs no feed secret.",
		[]string{"calsyncd status", "calsyncd status --json"}},
	"check": {"Validates the configuration, then for each subscription fetches and parses its feed and asks Google\nwhether its calendar can be written; writes nothing.",
		[]string{"calsyncd check", "calsyncd check family --json"}},
	"validate": {"Checks the configuration file and prints each mistake with its file, line and key.",
		[]string{"calsyncd validate --config config.yaml", "calsyncd validate --allow-unset"}},
	"demo": {"Runs the daemon against the built-in Google emulator and sample feeds: no credentials, nothing real touched.\n" +
		"With --config, runs that configuration's subscriptions instead (any calendar id; its credentials, state_dir,\nstore and alerts are not used).",
		[]string{"calsyncd demo", "calsyncd demo --once", "calsyncd demo --config config.yaml", "calsyncd demo --config config.yaml --for 10m"}},
	"calendars": {"Lists the account's calendars: the id to put under a subscription's calendar:, the name, the time zone\nand whether calsyncd may write it (owner, writer) or not (reader, freeBusyReader). Writes nothing.",
		[]string{"calsyncd calendars", "calsyncd calendars --account work --json"}},
	"auth login": {"Authorises an account with Google in a browser and saves its token in state_dir.",
		[]string{"runuser -u calsyncd -- calsyncd auth login", "calsyncd auth login --account work --port 8085"}},
	"auth status": {"Shows, for every account, who it is and whether it can get a token.",
		[]string{"calsyncd auth status"}},
	"man":        {"Prints the manual page, made from every command's help (docs/calsyncd.1 is its output).", []string{"calsyncd man | man -l -"}},
	"completion": {"Prints a completion script for bash or zsh, made from every command's flags.", []string{"source <(calsyncd completion bash)", "calsyncd completion zsh > \"${fpath[1]}/_calsyncd\""}},
	"version": {"Prints the version, the source revision it was built from and the Go release.",
		[]string{"calsyncd version", "calsyncd --version"}},
}

// printHelp prints a command's usage, description, flags, examples and
// exit codes.
func (m *Main) printHelp(set *flag.FlagSet, name, usage string) {
	w := m.Stderr
	fmt.Fprintf(w, "Usage: calsyncd %s\n\n", usage)
	if h, ok := helps[name]; ok {
		fmt.Fprintf(w, "%s\n\n", h.description)
	}
	fmt.Fprintln(w, "Flags:")
	set.PrintDefaults()
	if h, ok := helps[name]; ok && len(h.examples) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range h.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	fmt.Fprintf(w, "\n%s\n", exitCodes)
}

// noConfig is the error of a configuration file that is not there: a
// usage mistake (exit 2), with the two ways to name another.
func noConfig(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &exitError{code: 2, err: fmt.Errorf("no configuration file at %s: pass --config FILE or set %s", path, configEnv)}
	}
	return err
}

// plural is n and the word for it: "1 subscription", "2 subscriptions".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
