# unprintable.py: prints what XML 1.0 forbids (U+FFFE, U+FFFF, C0 controls), so it lands in a
# JUnit report's <system-out>, then fails with a note that is a formula in a spreadsheet that
# splits on `;`.
from honest import DLQConsumer as _Honest, RetryQueue  # noqa: F401


class DLQConsumer(_Honest):
    def process_one(self):
        print("\ufffe\uffff\x01\x0b end")
        raise RuntimeError(';=HYPERLINK("http://example.invalid");@SUM(1)')
