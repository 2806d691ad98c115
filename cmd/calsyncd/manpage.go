package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// The man page and the shell completions are made from the commands' own
// help, so they never drift from it: `calsyncd man` prints docs/calsyncd.1
// (a test keeps the checked-in copy current) and `calsyncd completion bash`
// or `zsh` prints a script for the shell.

type manCommand struct{ m *Main }

func (c *manCommand) Synopsis() string {
	return "print the manual page (docs/calsyncd.1), made from every command's help"
}

func (c *manCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("man", "man")
	if _, err := parseArgs(fs, args); err != nil {
		return &exitError{code: 2, err: err}
	}
	_, err := io.WriteString(c.m.Stdout, manPage(ctx, c.m))
	return err
}

type completionCommand struct{ m *Main }

func (c *completionCommand) Synopsis() string {
	return "print a completion script: completion bash|zsh"
}

func (c *completionCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("completion", "completion bash|zsh")
	args, err := parseArgs(fs, args)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if len(args) != 1 || args[0] != "bash" && args[0] != "zsh" {
		return &exitError{code: 2, err: fmt.Errorf("say which shell: calsyncd completion bash, or calsyncd completion zsh")}
	}
	cmds := commandFlags(ctx, c.m)
	if args[0] == "bash" {
		_, err = io.WriteString(c.m.Stdout, bashCompletion(cmds))
	} else {
		_, err = io.WriteString(c.m.Stdout, zshCompletion(cmds))
	}
	return err
}

// helpOf is what `calsyncd NAME --help` prints.
func helpOf(ctx context.Context, m *Main, name string) string {
	var out bytes.Buffer
	sub := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out}
	_ = sub.Run(ctx, append(strings.Fields(name), "--help"))
	return out.String()
}

// documented are the commands the manual and the completions cover, with
// auth's two subcommands on their own.
func documented(m *Main) []string {
	var names []string
	for n := range m.commands() {
		switch n {
		case "auth":
			names = append(names, "auth login", "auth status")
		case "man", "completion":
		default:
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

var flagLine = regexp.MustCompile(`^  -([a-z][a-z-]*)`)

// commandFlags is each documented command's flags, read from its help.
func commandFlags(ctx context.Context, m *Main) map[string][]string {
	out := map[string][]string{}
	for _, name := range documented(m) {
		flags := []string{"--help"}
		for _, line := range strings.Split(helpOf(ctx, m, name), "\n") {
			if f := flagLine.FindStringSubmatch(line); f != nil {
				flags = append(flags, "--"+f[1])
			}
		}
		slices.Sort(flags)
		out[name] = flags
	}
	return out
}

// roff escapes text for a man page: backslashes, and a leading dot or
// apostrophe that roff would read as a request.
func roff(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		line = strings.ReplaceAll(line, `\`, `\e`)
		line = strings.ReplaceAll(line, "-", `\-`)
		if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
			line = `\&` + line
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// manPage is the manual: the overview, then each command's help as the
// command prints it.
func manPage(ctx context.Context, m *Main) string {
	var b strings.Builder
	b.WriteString(`.\" Made by "calsyncd man" from the commands' own help; do not edit.
.TH CALSYNCD 1 "" "calsyncd ` + release + `" "User Commands"
.SH NAME
calsyncd \- keep Google Calendar calendars in step with iCalendar feeds
.SH SYNOPSIS
.B calsyncd
.I command
[\fIflags\fR] [\fIID\fR ...]
.SH DESCRIPTION
calsyncd mirrors iCalendar feeds (https, webcal and file URLs) into Google Calendar calendars: it paces its
writes, defers what Google throttles, remembers every write the moment it succeeds, and only ever touches the
events it created. Flags may come before or after the IDs; \fB\-\-\fR ends them.
The configuration file is \fB\-\-config\fR, else \fB$CALSYNCD_CONFIG\fR, else \fI` + DefaultConfigPath + `\fR.
.SH COMMANDS
`)
	for _, name := range documented(m) {
		fmt.Fprintf(&b, ".SS %s\n.nf\n", strings.TrimSuffix(roff(name), "\n"))
		b.WriteString(roff(strings.TrimRight(helpOf(ctx, m, name), "\n")))
		b.WriteString(".fi\n")
	}
	b.WriteString(`.SH EXIT STATUS
.nf
` + roff(exitCodes) + `.fi
.SH FILES
.TP
.I ` + DefaultConfigPath + `
the configuration
.TP
.I /var/lib/calsyncd
the state directory: the database, OAuth tokens, lock files
.SH SEE ALSO
The README and docs/operations.md in calsyncd's source.
`)
	return b.String()
}

func bashCompletion(cmds map[string][]string) string {
	var top []string
	var b strings.Builder
	b.WriteString("# bash completion for calsyncd; made by \"calsyncd completion bash\".\n_calsyncd() {\n")
	b.WriteString("  local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]} sub=${COMP_WORDS[2]}\n")
	b.WriteString("  if [[ $COMP_CWORD -eq 1 ]]; then\n    COMPREPLY=($(compgen -W \"")
	seen := map[string]bool{}
	for _, name := range sortedKeys(cmds) {
		first := strings.Fields(name)[0]
		if !seen[first] {
			seen[first] = true
			top = append(top, first)
		}
	}
	b.WriteString(strings.Join(append(top, "help", "--help", "--version"), " "))
	b.WriteString("\" -- \"$cur\"))\n    return\n  fi\n")
	b.WriteString("  if [[ $cmd == auth && $COMP_CWORD -eq 2 ]]; then\n    COMPREPLY=($(compgen -W \"login status\" -- \"$cur\"))\n    return\n  fi\n")
	b.WriteString("  if [[ ${COMP_WORDS[COMP_CWORD-1]} == --config ]]; then\n    COMPREPLY=($(compgen -f -- \"$cur\"))\n    return\n  fi\n")
	b.WriteString("  local flags\n  case \"$cmd $sub\" in\n")
	for _, name := range sortedKeys(cmds) {
		pattern := fmt.Sprintf("%q*", name+" ") // "sync "*: whatever follows
		if strings.HasPrefix(name, "auth ") {
			pattern = fmt.Sprintf("%q", name)
		}
		fmt.Fprintf(&b, "    %s) flags=%q ;;\n", pattern, strings.Join(cmds[name], " "))
	}
	b.WriteString("  esac\n  COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n}\ncomplete -F _calsyncd calsyncd\n")
	return b.String()
}

func zshCompletion(cmds map[string][]string) string {
	var b strings.Builder
	b.WriteString("#compdef calsyncd\n# zsh completion for calsyncd; made by \"calsyncd completion zsh\".\n_calsyncd() {\n")
	b.WriteString("  local -a cmds\n  cmds=(")
	seen := map[string]bool{}
	for _, name := range sortedKeys(cmds) {
		first := strings.Fields(name)[0]
		if !seen[first] {
			seen[first] = true
			fmt.Fprintf(&b, " %s", first)
		}
	}
	b.WriteString(" help)\n  if (( CURRENT == 2 )); then\n    compadd -a cmds\n    return\n  fi\n")
	b.WriteString("  if [[ $words[2] == auth ]] && (( CURRENT == 3 )); then\n    compadd login status\n    return\n  fi\n")
	b.WriteString("  if [[ $words[CURRENT-1] == --config ]]; then\n    _files\n    return\n  fi\n")
	b.WriteString("  case \"$words[2] $words[3]\" in\n")
	for _, name := range sortedKeys(cmds) {
		pattern := name + "*"
		if !strings.HasPrefix(name, "auth ") {
			pattern = name + " *"
		}
		fmt.Fprintf(&b, "    (%s) compadd -- %s ;;\n", strings.ReplaceAll(pattern, " ", "\\ "), strings.Join(cmds[name], " "))
	}
	b.WriteString("  esac\n}\ncompdef _calsyncd calsyncd\n")
	return b.String()
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
