/* keeps the support library non-empty */
void rocke_test_support_anchor(void);
void rocke_test_support_anchor(void) {}
