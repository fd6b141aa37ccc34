# session 18 call 6 (NVIDIA H200), prepared here at the four-chunk rule before the lock condition, OLD the build of f94b6ff:
#   ROWS_ODD_SHAPES="65536,1001 65536,1537 32768,1999 65536,767 65536,1000 65536,1536 16384,2047 1000,3001" \
#     bash bench/rows_odd_h200.sh prepare build/rocke OLD/build/rocke
DEVICE_CALL_TAIL=80 bash bench/device_call.sh \
  "rows:300:ROWS_ODD_SHAPES='65536,1001 65536,1537 32768,1999 65536,767 65536,1000 65536,1536 16384,2047 1000,3001' bash bench/rows_odd_h200.sh run"
