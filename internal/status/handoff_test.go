package status_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/status"
	"github.com/calsyncd/calsyncd/internal/subscription"
)

// handOffConfig is a configuration whose listen is the test server's
// address, with token and a state directory holding no hand-off key.
func handOffConfig(ts *httptest.Server, token string) *config.Config {
	cfg := config.Default()
	cfg.Listen, cfg.Status.Token, cfg.StateDir = strings.TrimPrefix(ts.URL, "http://"), token, ""
	return cfg
}

// everyOption is Options with every field an operator sets (those JSON
// encodes) switched on, found by reflection: an option added later is
// covered without touching this test.
func everyOption(t *testing.T) subscription.Options {
	t.Helper()
	var opts subscription.Options
	v := reflect.ValueOf(&opts).Elem()
	n := 0
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if f.Tag.Get("json") == "-" || !f.IsExported() {
			continue
		}
		if f.Type.Kind() != reflect.Bool {
			t.Fatalf("option %s is a %s: teach this test to set it", f.Name, f.Type)
		}
		v.Field(i).SetBool(true)
		n++
	}
	if n < 2 {
		t.Fatalf("only %d operator options found", n)
	}
	return opts
}

// TestHandOffCarriesEveryOption: whatever the operator gave `calsyncd
// sync` reaches the daemon's Trigger, each option alone and all together.
func TestHandOffCarriesEveryOption(t *testing.T) {
	all := everyOption(t)
	cases := map[string]subscription.Options{"none": {}, "all": all}
	v := reflect.ValueOf(all)
	for i := 0; i < v.NumField(); i++ {
		if f := v.Type().Field(i); f.Type.Kind() == reflect.Bool && v.Field(i).Bool() {
			var one subscription.Options
			reflect.ValueOf(&one).Elem().Field(i).SetBool(true)
			cases[f.Name] = one
		}
	}
	for name, opts := range cases {
		t.Run(name, func(t *testing.T) {
			d := &fakeDaemon{running: true, runID: 7}
			ts, _ := server(t, d, "tok")
			runID, err := status.HandOff(context.Background(), handOffConfig(ts, "tok"), "team", opts)
			if err != nil || runID != 7 {
				t.Fatalf("HandOff = %d, %v", runID, err)
			}
			if len(d.opts) != 1 || !reflect.DeepEqual(d.opts[0], opts) {
				t.Fatalf("the daemon was asked with %+v, want %+v", d.opts, opts)
			}
		})
	}
}

// TestTriggerRefusesOptionsItDoesNotKnow: a daemon older than the calsyncd
// handing off refuses the sync instead of running it without the option.
func TestTriggerRefusesOptionsItDoesNotKnow(t *testing.T) {
	d := &fakeDaemon{running: true, runID: 7}
	ts, _ := server(t, d, "")
	for _, body := range []string{`{"allow_deletes":true,"shiny_new_option":true}`, `{"allow_deletes":"yes"}`, `[`} {
		resp, err := http.Post(ts.URL+"/subscriptions/team/sync", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", body, resp.StatusCode)
		}
	}
	if len(d.got) != 0 {
		t.Errorf("the daemon ran %v", d.got)
	}
	// No body at all (curl -X POST) is a plain sync.
	if code, _ := do(t, "POST", ts.URL+"/subscriptions/team/sync", ""); code != http.StatusAccepted || len(d.opts) != 1 || !reflect.DeepEqual(d.opts[0], subscription.Options{}) {
		t.Errorf("empty body: %d %+v", code, d.opts)
	}
}

// TestTriggerNamesTheLeaseHolder: a daemon that does not hold the
// subscription's account answers 409 with the holder (it
// once answered 500).
func TestTriggerNamesTheLeaseHolder(t *testing.T) {
	d := &fakeDaemon{running: true, err: &subscription.LeaseHeldError{Account: "work", Holder: "replica-b/12/ab"}}
	ts, _ := server(t, d, "")
	_, err := status.HandOff(context.Background(), handOffConfig(ts, ""), "team", subscription.Options{})
	var ho *status.HandOffError
	if !errors.As(err, &ho) || ho.Code != http.StatusConflict || !ho.LeaseHeld() || ho.Account != "work" || ho.Holder != "replica-b/12/ab" {
		t.Fatalf("HandOff = %v (%+v)", err, ho)
	}
	if !strings.Contains(ho.Message, "replica-b/12/ab") {
		t.Errorf("message %q does not name the holder", ho.Message)
	}
}
