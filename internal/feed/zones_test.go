package feed

import "testing"

func TestZoneNames(t *testing.T) {
	tests := map[string]struct {
		zone, how string
	}{
		"Europe/Berlin":             {"Europe/Berlin", zoneByName},
		"europe/lisbon":             {"Europe/Lisbon", zoneByName},
		"US/Pacific":                {"America/Los_Angeles", zoneByName},
		"Mexico/General":            {"America/Mexico_City", zoneByName},
		"Asia/Calcutta":             {"Asia/Kolkata", zoneByName},
		"UTC":                       {zoneUTC, zoneByName},
		"Etc/GMT":                   {zoneUTC, zoneByName},
		"W. Europe Standard Time":   {"Europe/Berlin", zoneByWindows},
		"GMT Standard Time":         {"Europe/London", zoneByWindows},
		"eastern standard time":     {"America/New_York", zoneByWindows},
		"New Zealand Standard Time": {"Pacific/Auckland", zoneByWindows},
		"/mozilla.org/20070129_1/America/New_York":                     {"America/New_York", zoneByPrefix},
		"/freeassociation.sourceforge.net/Tzfile/Europe/Oslo":          {"Europe/Oslo", zoneByPrefix},
		"/softwarestudio.org/Olson_20011030_5/America/Chicago":         {"America/Chicago", zoneByPrefix},
		"(UTC-05:00) Eastern Time (US & Canada)":                       {"America/New_York", zoneByGuess},
		"(GMT+10:00) Canberra, Melbourne, Sydney":                      {"Australia/Sydney", zoneByGuess},
		"(UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna": {"Europe/Amsterdam", zoneByGuess},
		"Pacific Time (US & Canada), Tijuana":                          {"America/Los_Angeles", zoneByGuess},
		"Eastern":                                                      {"America/New_York", zoneByGuess},
		"Germany/Berlin":                                               {"Europe/Berlin", zoneByGuess},
		"tzone://Microsoft/Custom":                                     {"", zoneUnresolved},
		"Mars/Olympus_Mons":                                            {"", zoneUnresolved},
		"":                                                             {"", zoneUnresolved},
	}
	r := newZoneResolver()
	for tzid, want := range tests {
		z := r.resolve(tzid)
		if z.name != want.zone || z.how != want.how {
			t.Errorf("%q resolved to %q by %s, want %q by %s", tzid, z.name, z.how, want.zone, want.how)
		}
		if (z.loc == nil) != (want.zone == "") {
			t.Errorf("%q: location %v", tzid, z.loc)
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
