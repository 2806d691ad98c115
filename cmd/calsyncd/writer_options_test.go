package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
)

// TestWriterOptionsFromConfig: the writer block's defaults become exactly
// the writer's default options, and a configured number reaches them.
func TestWriterOptionsFromConfig(t *testing.T) {
	if got, want := gcalwriter.OptionsFor(config.Default().Writer.Limits()), gcalwriter.DefaultOptions(); !reflect.DeepEqual(got, want) {
		t.Errorf("config's writer defaults give %+v, want gcalwriter.DefaultOptions %+v", got, want)
	}
	cfg, err := config.Parse("/etc/calsyncd/config.yaml", []byte("writer:\n  retry_base: 500ms\n  retry_cap: 8s\n  spacing: 100ms\n"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	o := gcalwriter.OptionsFor(cfg.Writer.Limits())
	if o.RetryBase != 500*time.Millisecond || o.RetryCap != 8*time.Second || o.Spacing != 100*time.Millisecond || o.MaxAttempts != 5 || o.MaxGenerations != 5 {
		t.Errorf("options from the file: %+v", o)
	}
}
