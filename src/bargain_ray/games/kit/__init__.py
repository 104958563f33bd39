"""What every family would otherwise write for itself: reading JSON replies, concession tactics."""
