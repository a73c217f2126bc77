package coreml

import (
	"errors"
	"testing"
)

func TestChooseUnits(t *testing.T) {
	tests := []struct {
		flag, manifest, fallback, want ComputeUnits
	}{
		{DefaultUnits, DefaultUnits, CPUAndGPU, CPUAndGPU},
		{DefaultUnits, All, CPUAndGPU, All},
		{CPUOnly, All, CPUAndGPU, CPUOnly},
		{CPUAndNeuralEngine, DefaultUnits, CPUAndGPU, CPUAndNeuralEngine},
		{DefaultUnits, DefaultUnits, DefaultUnits, DefaultUnits},
	}
	for _, tt := range tests {
		if got := ChooseUnits(tt.flag, tt.manifest, tt.fallback); got != tt.want {
			t.Errorf("ChooseUnits(%s, %s, %s) = %s, want %s", tt.flag, tt.manifest, tt.fallback, got, tt.want)
		}
	}
}

func TestVerifyHeadUnits(t *testing.T) {
	tests := []struct {
		engine  ComputeUnits
		env     string
		want    ComputeUnits
		wantErr bool
	}{
		{All, "", CPUOnly, false},
		{CPUAndNeuralEngine, "", CPUOnly, false},
		{DefaultUnits, "", CPUOnly, false}, // Core ML's default is all
		{CPUAndGPU, "", CPUAndGPU, false},
		{CPUOnly, "", CPUOnly, false},
		{All, "cpu", CPUOnly, false},
		{All, "gpu", CPUAndGPU, false},
		{CPUAndGPU, "ane", CPUAndNeuralEngine, false},
		{CPUAndGPU, "all", All, false},
		{All, "cpuAndGPU", CPUAndGPU, false},
		{All, "npu", DefaultUnits, true},
		{All, "default", DefaultUnits, true},
	}
	for _, tt := range tests {
		got, err := VerifyHeadUnits(tt.engine, tt.env)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("VerifyHeadUnits(%s, %q) = %s, %v; want %s, error %v", tt.engine, tt.env, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestV2HeadUnits(t *testing.T) {
	tests := []struct {
		chunks  ComputeUnits
		env     string
		want    ComputeUnits
		wantErr bool
	}{
		{CPUAndGPU, "", CPUAndGPU, false},
		{All, "chunks", All, false},
		{CPUAndGPU, "ane", CPUAndNeuralEngine, false},
		{CPUAndGPU, "cpu", CPUOnly, false},
		{CPUAndGPU, "fast", DefaultUnits, true},
	}
	for _, tt := range tests {
		got, err := V2HeadUnits(tt.chunks, tt.env)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("V2HeadUnits(%s, %q) = %s, %v; want %s, error %v", tt.chunks, tt.env, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestCheckStatefulUnits(t *testing.T) {
	for _, tt := range []struct {
		units ComputeUnits
		ok    bool
	}{
		{CPUAndGPU, true},
		{All, true},
		{DefaultUnits, true},
		{CPUOnly, false},
		{CPUAndNeuralEngine, false},
	} {
		err := CheckStatefulUnits(tt.units)
		if (err == nil) != tt.ok {
			t.Errorf("CheckStatefulUnits(%s) = %v, want ok %v", tt.units, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrUnsupportedUnits) {
			t.Errorf("CheckStatefulUnits(%s) = %v, does not wrap ErrUnsupportedUnits", tt.units, err)
		}
	}
}
