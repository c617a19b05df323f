"""The WhatsApp channel (WhatsApp Web multi-device, through neonize/whatsmeow)."""

from omega.channels.whatsapp.channel import WhatsAppChannel

__all__ = ["WhatsAppChannel"]
