package tz

import "testing"

func TestZoneNames(t *testing.T) {
	tests := map[string]struct {
		zone string
		how  How
	}{
		"Europe/Berlin":             {"Europe/Berlin", ByName},
		"europe/lisbon":             {"Europe/Lisbon", ByName},
		"US/Pacific":                {"America/Los_Angeles", ByName},
		"Mexico/General":            {"America/Mexico_City", ByName},
		"Asia/Calcutta":             {"Asia/Kolkata", ByName},
		"UTC":                       {UTC, ByName},
		"Etc/GMT":                   {UTC, ByName},
		"W. Europe Standard Time":   {"Europe/Berlin", ByWindows},
		"GMT Standard Time":         {"Europe/London", ByWindows},
		"eastern standard time":     {"America/New_York", ByWindows},
		"New Zealand Standard Time": {"Pacific/Auckland", ByWindows},
		"/mozilla.org/20070129_1/America/New_York":                     {"America/New_York", ByPrefix},
		"/freeassociation.sourceforge.net/Tzfile/Europe/Oslo":          {"Europe/Oslo", ByPrefix},
		"/softwarestudio.org/Olson_20011030_5/America/Chicago":         {"America/Chicago", ByPrefix},
		"(UTC-05:00) Eastern Time (US & Canada)":                       {"America/New_York", ByGuess},
		"(GMT+10:00) Canberra, Melbourne, Sydney":                      {"Australia/Sydney", ByGuess},
		"(UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna": {"Europe/Amsterdam", ByGuess},
		"Pacific Time (US & Canada), Tijuana":                          {"America/Los_Angeles", ByGuess},
		"Eastern":                                                      {"America/New_York", ByGuess},
		"Germany/Berlin":                                               {"Europe/Berlin", ByGuess},
		"tzone://Microsoft/Custom":                                     {"", Unresolved},
		"Mars/Olympus_Mons":                                            {"", Unresolved},
		"":                                                             {"", Unresolved},
	}
	r := NewResolver()
	for tzid, want := range tests {
		z := r.Resolve(tzid)
		if z.Name != want.zone || z.How != want.how {
			t.Errorf("%q resolved to %q by %s, want %q by %s", tzid, z.Name, z.How, want.zone, want.how)
		}
		if (z.Loc == nil) != (want.zone == "") {
			t.Errorf("%q: location %v", tzid, z.Loc)
		}
	}
}

func TestWindowsTableCoversWhatOutlookWrites(t *testing.T) {
	if len(windowsZones) < 130 {
		t.Fatalf("only %d Windows zones", len(windowsZones))
	}
	for win, iana := range windowsZones {
		if _, ok := loadLocation(iana); !ok && iana != "Etc/UTC" {
			t.Errorf("%q maps to %q, which this Go does not know", win, iana)
		}
	}
}
