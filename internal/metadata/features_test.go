package metadata

import "testing"

func TestMetadataChanged(t *testing.T) {
	for _, tc := range []struct {
		a, b int16
		want bool
	}{
		{25, 25, false},
		{25, 24, false}, // 4.0-IV3 and IV2 changed no records
		{25, 23, false}, // 4.0-IV1 did, but it is the target
		{25, 22, true},  // crossing 4.0-IV1 (ELR's records)
		{22, 25, true},  // either order
		{21, 17, false}, // 3.9-IV0 down to 3.7-IV2: none above it changed
		{21, 16, true},  // past 3.7-IV2, which changed the records
		{16, 15, false},
		{8, 7, true},
		{26, 25, true}, // a level this version does not know
		{7, 6, true},
	} {
		if got := MetadataChanged(tc.a, tc.b); got != tc.want {
			t.Errorf("MetadataChanged(%d, %d) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestMetadataVersionName(t *testing.T) {
	for level, want := range map[int16]string{7: "3.3-IV3", 21: "3.9-IV0", 25: "4.0-IV3", 6: "", 26: ""} {
		got, ok := MetadataVersionName(level)
		if got != want || ok != (want != "") {
			t.Errorf("MetadataVersionName(%d) = %q, %v; want %q", level, got, ok, want)
		}
	}
	for _, f := range SupportedFeatures() {
		if f.Name != FeatureMetadataVersion {
			continue
		}
		for l := f.Min; l <= f.Max; l++ {
			if _, ok := MetadataVersionName(l); !ok {
				t.Errorf("supported metadata.version %d has no name", l)
			}
		}
	}
}
