//go:build amd64 && !purego

#include "textflag.h"

// func dotAVX2(h *[150]float32, p0, p1, p2 *float32, y *float32, groups int)
//
// For each group of 32 outputs: twelve sums (phase r, vector v in Y(4r+v)),
// each of eight outputs; for each q < 50, tap 3q+r is broadcast and
// multiplied into the next eight samples of phase r from j+q, fused with
// the add. The three phases' sums are added at the end.
TEXT ·dotAVX2(SB), NOSPLIT, $0-48
	MOVQ p0+8(FP), R9
	MOVQ p1+16(FP), R10
	MOVQ p2+24(FP), R11
	MOVQ y+32(FP), DX
	MOVQ groups+40(FP), DI

group:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	MOVQ h+0(FP), SI
	MOVQ R9, AX
	MOVQ R10, BX
	MOVQ R11, R8
	MOVQ $50, CX

tap:
	VBROADCASTSS 0(SI), Y12
	VBROADCASTSS 4(SI), Y13
	VBROADCASTSS 8(SI), Y14
	VFMADD231PS 0(AX), Y12, Y0
	VFMADD231PS 32(AX), Y12, Y1
	VFMADD231PS 64(AX), Y12, Y2
	VFMADD231PS 96(AX), Y12, Y3
	VFMADD231PS 0(BX), Y13, Y4
	VFMADD231PS 32(BX), Y13, Y5
	VFMADD231PS 64(BX), Y13, Y6
	VFMADD231PS 96(BX), Y13, Y7
	VFMADD231PS 0(R8), Y14, Y8
	VFMADD231PS 32(R8), Y14, Y9
	VFMADD231PS 64(R8), Y14, Y10
	VFMADD231PS 96(R8), Y14, Y11
	ADDQ $12, SI
	ADDQ $4, AX
	ADDQ $4, BX
	ADDQ $4, R8
	DECQ CX
	JNZ tap

	VADDPS Y4, Y0, Y0
	VADDPS Y8, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y9, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y10, Y2, Y2
	VADDPS Y7, Y3, Y3
	VADDPS Y11, Y3, Y3
	VMOVUPS Y0, 0(DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	ADDQ $128, R9
	ADDQ $128, R10
	ADDQ $128, R11
	ADDQ $128, DX
	DECQ DI
	JNZ group
	VZEROUPPER
	RET
