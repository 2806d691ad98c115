// Command calsyncd keeps Google Calendar calendars in step with iCalendar
// feeds. This package is only flags, wiring and exit codes; the logic lives
// in internal/.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/calsyncd/calsyncd/internal/printable"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	m := NewMain()
	err := m.Run(ctx, os.Args[1:])
	stop()
	os.Exit(exitCode(m.Stderr, err))
}

// exitError carries a specific exit status.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func exitCode(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0 // -h or --help: the usage was the answer
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "calsyncd:", printable.Lines(ee.err.Error()))
		}
		return ee.code
	}
	// Errors may carry a feed server's or Google's text: escape what a
	// terminal would act on (line breaks stay, for multi-line messages).
	fmt.Fprintln(stderr, "calsyncd:", printable.Lines(err.Error()))
	return 1
}

// Main is the program; tests call Run directly.
type Main struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// NewMain returns a Main wired to the process's standard streams.
func NewMain() *Main {
	return &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
}

type command interface {
	Run(ctx context.Context, args []string) error
	Synopsis() string
}

func (m *Main) commands() map[string]command {
	return map[string]command{
		"auth":       &authCommand{m: m},
		"check":      &checkCommand{m: m},
		"demo":       &demoCommand{m: m},
		"run":        &runCommand{m: m},
		"status":     &statusCommand{m: m},
		"sync":       &syncCommand{m: m},
		"validate":   &validateCommand{m: m},
		"version":    &versionCommand{m: m},
		"man":        &manCommand{m: m},
		"completion": &completionCommand{m: m},

		"calendars": &calendarsCommand{m: m},
	}
}

// Run executes the subcommand named by args[0].
func (m *Main) Run(ctx context.Context, args []string) error {
	cmds := m.commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" && len(args) == 1 {
		m.usage(cmds)
		if len(args) == 0 {
			return &exitError{code: 2}
		}
		return nil
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = []string{"version"}
	}
	if args[0] == "help" {
		// calsyncd help CMD [SUB]: that command's help.
		args = append(args[1:], "--help")
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		m.usage(cmds)
		return &exitError{code: 2, err: fmt.Errorf("unknown command %q", args[0])}
	}
	return cmd.Run(ctx, args[1:])
}

func (m *Main) usage(cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("calsyncd keeps Google Calendar calendars in step with iCalendar feeds.\n\nUsage: calsyncd <command> [flags]\n\nCommands:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-9s %s\n", n, cmds[n].Synopsis())
	}
	b.WriteString("\nRun `calsyncd <command> -h` for a command's flags and examples; --config defaults to $" + configEnv + ", else " + DefaultConfigPath + ".\n\n" + exitCodes + "\n")
	fmt.Fprint(m.Stderr, b.String())
}

// newFlagSet returns a flag set that reports errors instead of exiting.
func (m *Main) newFlagSet(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() { m.printHelp(fs, name, usage) }
	return fs
}

type versionCommand struct{ m *Main }

func (c *versionCommand) Synopsis() string { return "print the version" }

func (c *versionCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("version", "version")
	if _, err := parseArgs(fs, args); err != nil {
		return &exitError{code: 2, err: err}
	}
	fmt.Fprintln(c.m.Stdout, "calsyncd", readBuildInfo())
	return nil
}
