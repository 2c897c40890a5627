package sinkdef

import (
	"fmt"
	"strings"

	"github.com/lakesql/lakesql/sinkddl"
)

// deltaFeatureOptions map the WITH options that turn on a Delta writer
// table feature to the table property that does (the protocol upgrade
// follows from the property: delta.PropertyFeatures).
var deltaFeatureOptions = map[string]string{
	"in_commit_timestamps": "delta.enableInCommitTimestamps",
	"row_tracking":         "delta.enableRowTracking",
	"v2_checkpoints":       "delta.checkpointPolicy",
}

// DeltaFeatureProperty returns the Delta table property and value an
// option of deltaFeatureOptions stands for (in_commit_timestamps = true is
// delta.enableInCommitTimestamps = true, v2_checkpoints = true is
// delta.checkpointPolicy = v2, false the property's off value); ok is
// false for any other option. ALTER SINK ... SET passes the pair to the
// table's PropertySetter.
func DeltaFeatureProperty(option, value string) (prop, val string, ok bool, err error) {
	prop, ok = deltaFeatureOptions[option]
	if !ok {
		return "", "", false, nil
	}
	on := strings.EqualFold(value, "true")
	if !on && !strings.EqualFold(value, "false") {
		return "", "", true, fmt.Errorf("%w: option %s: %q is not TRUE or FALSE", ErrOption, option, value)
	}
	switch {
	case prop == "delta.checkpointPolicy" && on:
		return prop, "v2", true, nil
	case prop == "delta.checkpointPolicy":
		return prop, "classic", true, nil
	}
	return prop, strings.ToLower(value), true, nil
}

// setDeltaFeature records a feature option of a Delta sink's WITH: the
// property goes into the table lakesql creates; false leaves it out.
func (so *sinkOptions) setDeltaFeature(format string, o sinkddl.Option) error {
	if format != sinkddl.FormatDelta {
		return fmt.Errorf("%w: option %s: Delta only", ErrOption, o.Key)
	}
	if o.Kind == sinkddl.OptionInteger {
		return fmt.Errorf("%w: option %s: %s is not TRUE or FALSE", ErrOption, o.Key, o.Value)
	}
	prop, val, _, err := DeltaFeatureProperty(o.Key, o.Value)
	if err != nil {
		return err
	}
	if !strings.EqualFold(o.Value, "true") {
		return nil
	}
	if so.deltaProps == nil {
		so.deltaProps = map[string]string{}
	}
	so.deltaProps[prop] = val
	return nil
}
